"""Storage: the SQLite database file and the fact store on it."""
