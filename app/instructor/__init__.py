"""What instructors see: the class's progress, the course's health and step previews."""
