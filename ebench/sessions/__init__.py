"""ebench.sessions: trials recorded as sessions, solvers, batch runs, metrics and reports
(see the README's "Scoring models" section)."""
