"""ebench.tasks: the task format, change capture, grading, and certified task generation
(see docs/certification.md and the README's Tasks section)."""
