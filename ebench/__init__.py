"""ebench: E-Bench worlds, tasks, trials and their debugger."""

__version__ = "0.1.0"
