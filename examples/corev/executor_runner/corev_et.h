// The executor runner as a function, for a firmware's own main (examples/own_project;
// the build compiles it in with env.ExecutorRunner() when $RUNNER_APP_SOURCES names the
// firmware's own sources).
//
// corev_et_run() loads the model the build linked in (or, with model_placement=external,
// the one in the board's model region, checked first), runs its method ($RUNNER_METHOD,
// else the first) with the build's inputs (all ones without NAME.inputs.json),
// num_executions= times, prints its
// outputs ("Output 0: float32[5] 2,2,2,2,2") and the cycles of each phase ("Cycles
// execute: 809"); for a bundled program (.bpte) it runs and checks each test case
// instead ("Test case 0: PASS ..."). It returns what main should return, the program's
// exit status:
//   0  the method ran (and, for a bundled program, every test case passed);
//   1  an ExecuTorch call failed ("Error: load_method failed: 0x21: ..." printed: the
//      error code of runtime/core/error.h, and a hint), or a test case failed;
//   2  the external model region failed its check ("Model check failed: 0x..": not a
//      model, another model than the one built for, an operator the firmware lacks).
// It uses no heap: its pools are static, sized from the model at build time.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

int corev_et_run(void);

#ifdef __cplusplus
}
#endif
