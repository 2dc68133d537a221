"""evalkit's built-in plugins, registered through the same entry points as any third-party plugin."""
