"""Tools for testing mbint (not part of the integration API).

- :mod:`mbint.testing.reference`: an independent NumPy implementation of the planar
  kernels and the index-1 formulation, written from the equations, used as a
  correctness oracle for the C kernels.  It is slow on purpose (plain NumPy, one
  state per call): never a performance baseline.
- :mod:`mbint.testing.spatial_chain`: a 3-D chain of N rods (spherical and revolute
  joints, spring-dampers) for the tests and the benchmark of the sparse index-1 path of
  spatial models.
"""
