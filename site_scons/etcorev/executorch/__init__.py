"""The ExecuTorch tree as a build sees it: its version and sources (et_tree), the index of
its build lists, kernel libraries and Buck targets (et_index, buck, kernel_sources), which
library builds which operator (kernel_plan), and CMSIS-NN, which the Cortex-M kernels call
(cmsis_nn).
"""
