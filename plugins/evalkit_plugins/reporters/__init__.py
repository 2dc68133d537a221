"""evalkit's built-in reporters (``evalkit.reporters`` entry points: junit, markdown, html, json)."""
