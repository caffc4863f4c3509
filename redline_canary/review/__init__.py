"""What the reviewer said: comments, captures, findings, and the vendor profiles that read them. Pure."""
