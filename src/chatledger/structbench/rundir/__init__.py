"""A structbench run directory (``run.json``, ``scores.parquet``, ``drilldown.json``): statistics
across the rows (``_stats``), strategy-vs-model effects, the worst-document drill-down and the
writer. Imports ``chatledger.runs``, so ``chatledger.structbench`` loads it on first use.
Builds on ``aggregate``, ``score`` and ``dataset``.
"""

from chatledger.structbench.rundir._write import StructRun, write_structbench_run

__all__ = ["StructRun", "write_structbench_run"]
