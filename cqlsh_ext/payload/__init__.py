"""What a blob holds once its compression layers are removed: text, JSON, records, bytes."""
