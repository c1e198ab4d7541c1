"""Importing this module registers every reader. The order is the order ``--kind auto`` asks
them in: formats with an unmistakable signature first (SQLite, a Slack workspace's
``users.json`` + ``channels.json``, Messenger's ``message_1.json``, Telegram's ``result.json``,
DiscordChatExporter's ``guild`` + ``channel``, signal-export's folders), then the text formats
(WhatsApp's line pattern), CSV last."""

from chatledger.corpus.exports import _imessage as _imessage  # isort: skip (sniff order)
from chatledger.corpus.exports import _slack as _slack  # isort: skip (sniff order)
from chatledger.corpus.exports import _messenger as _messenger  # isort: skip (sniff order; instagram first)
from chatledger.corpus.exports import _telegram as _telegram  # isort: skip (sniff order)
from chatledger.corpus.exports import _discord as _discord  # isort: skip (sniff order)
from chatledger.corpus.exports import _signal as _signal  # isort: skip (sniff order)
from chatledger.corpus.exports import _whatsapp as _whatsapp  # isort: skip (sniff order)
from chatledger.corpus.exports import _csv as _csv
