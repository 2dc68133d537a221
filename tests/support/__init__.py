"""Test support: a scriptable OpenAI-compatible chat-completions server and its pytest fixtures."""
