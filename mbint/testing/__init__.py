"""Tools for testing mbint (not part of the integration API).

- :mod:`mbint.testing.reference`: an independent NumPy implementation of the planar
  kernels and the index-1 formulation, written from the equations, used as a
  correctness oracle for the C kernels.  It is slow on purpose (plain NumPy, one
  state per call): never a performance baseline.
"""
