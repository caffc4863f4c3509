"""The one seam to GitHub: the client, retries, pacing, App auth, recordings, doctor."""
