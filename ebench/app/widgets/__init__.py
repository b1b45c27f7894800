"""The app's reusable widgets: one module per pane or view."""
