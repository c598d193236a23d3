"""``acpgen tap``: a transparent stdio proxy between an editor and an ACP
agent that records the session and validates it live.

Two processes, so that nothing the checks do can slow or break the session:

- :mod:`.proxy` (the process the editor starts) starts the agent and
  forwards every byte between the editor and the agent as it is read (two
  threads, blocking reads and writes, no parsing). Before it forwards a
  chunk it appends it to a bounded backlog for the observer; that never
  blocks, and a backlog past its limit is dropped (said on stderr), never
  the forwarding. It passes SIGINT, SIGTERM and SIGHUP to the agent and
  exits with the agent's status.
- :mod:`.observer` (started by the proxy, fed the chunks through a pipe)
  splits them into lines, writes the transcript and validates the lines
  with :class:`acpgen.validate.Validator`, in a thread of its own behind a
  bounded queue, reporting each finding as it is found.

:mod:`.frames` is the format of the pipe between them.
"""
