"""Imports every email kind so that each registers itself (the order fixes document order)."""

from chatledger.structbench.generate.kinds import _invoice as _invoice
from chatledger.structbench.generate.kinds import _job as _job
from chatledger.structbench.generate.kinds import _meeting as _meeting
from chatledger.structbench.generate.kinds import _order as _order
from chatledger.structbench.generate.kinds import _rsvp as _rsvp
from chatledger.structbench.generate.kinds import _support as _support
from chatledger.structbench.generate.kinds import _travel as _travel
