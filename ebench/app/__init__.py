"""ebench.app: the Textual playground and debugger (see the README's "The app" section)."""
