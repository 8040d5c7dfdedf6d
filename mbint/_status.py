"""Status codes of the C core (generated from csrc/core/status.def by
tools/gen_status.py; do not edit)."""

MB_OK = 0
MB_TERMINATED = 1
MB_RECOVERABLE = 2
MB_NEW_COORDINATES = 3
MB_ERR_ILL_INPUT = -1
MB_ERR_MEM = -2
MB_ERR_STEP_TOO_SMALL = -3
MB_ERR_MAX_STEPS = -4
MB_ERR_RHS_FAIL = -5
MB_ERR_NONFINITE = -6
MB_ERR_CALLBACK = -7
MB_ERR_EVENT_FAIL = -8
MB_ERR_NOT_SUPPORTED = -9
MB_ERR_LINALG = -10
MB_ERR_CONV = -11
MB_ERR_INTERRUPTED = -12

MESSAGES = {
    0: 'The solver successfully reached the end of the integration interval.',
    1: 'A termination event occurred.',
    2: 'Recoverable failure: the step is retried with a smaller step size.',
    3: 'The projection changed the coordinates of the state; the method restarts.',
    -1: 'Invalid input.',
    -2: 'Out of memory.',
    -3: 'Required step size is less than spacing between numbers.',
    -4: 'The maximum number of steps was reached.',
    -5: 'The right-hand side function reported a failure.',
    -6: 'The right-hand side returned NaN or Inf.',
    -7: 'A Python callback raised an exception.',
    -8: 'An event function reported a failure.',
    -9: 'The method does not support this problem or option.',
    -10: 'A linear solve failed (singular matrix).',
    -11: 'The nonlinear iteration failed to converge.',
    -12: 'The run was interrupted (KeyboardInterrupt).',
}
