"""Running firmware and reading what it prints: the simulator processes (simulator), the
models of a build and their inputs (models, runner_config), why a run failed (failures)
and the cycles per operator (profile).
"""
