// The executor runner as a function, for a firmware's own main (examples/own_project):
// load the model the build linked in (or the board's model region holds), run its
// first method with the build's inputs, print its outputs and the cycles of each phase.
// Returns the program's exit status: 0, or non-zero with the reason printed.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

int corev_et_run(void);

#ifdef __cplusplus
}
#endif
