"""Imports every email kind so that each registers itself (the order fixes document order)."""

from chatledger.structbench import _kind_invoice as _kind_invoice
from chatledger.structbench import _kind_job as _kind_job
from chatledger.structbench import _kind_meeting as _kind_meeting
from chatledger.structbench import _kind_order as _kind_order
from chatledger.structbench import _kind_rsvp as _kind_rsvp
from chatledger.structbench import _kind_support as _kind_support
from chatledger.structbench import _kind_travel as _kind_travel
