"""What a GitHub Actions run shows of a canary, by the module that owns each part. Pure.

The action's last step renders everything from the history records alone (the fragment
the run wrote), so a live run, a re-run of that step and a test all produce the same text;
``actions.py`` is the edge that writes it where the runner reads it. The parts:

* :mod:`workflow_commands` — the runner's command and output syntax, and its escaping;
* :mod:`actions_outputs` — the step outputs (pooled totals) and the plan's matrix;
* :mod:`actions_annotations` — ``::error``/``::warning`` lines pointing at corpus seeds;
* :mod:`actions_summary` — the job summary, kept under GitHub's 1 MiB.

This module only names them together, for callers that want "the Actions rendering"
without caring which room each piece lives in.
"""

from __future__ import annotations

from redline_canary.actions_annotations import ANNOTATIONS_PER_LEVEL as ANNOTATIONS_PER_LEVEL
from redline_canary.actions_annotations import annotation_commands as annotation_commands
from redline_canary.actions_annotations import corpus_file as corpus_file
from redline_canary.actions_outputs import Totals as Totals
from redline_canary.actions_outputs import action_outputs as action_outputs
from redline_canary.actions_outputs import matrix_entry as matrix_entry
from redline_canary.actions_outputs import totals as totals
from redline_canary.actions_summary import job_summary as job_summary
from redline_canary.actions_summary import md as md
from redline_canary.markdown_fit import SUMMARY_LIMIT as SUMMARY_LIMIT
from redline_canary.workflow_commands import escape_data as escape_data
from redline_canary.workflow_commands import escape_property as escape_property
from redline_canary.workflow_commands import output_entry as output_entry
from redline_canary.workflow_commands import workflow_command as workflow_command
