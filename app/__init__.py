"""designlab web app, CLI, persistence and grading."""
