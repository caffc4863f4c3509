"""Scorecards, summaries, annotations, the scoreboard. Pure except html (matplotlib, a process pool)."""
