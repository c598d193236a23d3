"""``acpgen tap``: a transparent stdio proxy between an editor and an ACP
agent that records the session and validates it live.

Two processes, so that nothing the checks do can slow or break the session:

- :mod:`.proxy` (the process the editor starts) starts the agent and
  forwards every byte between the editor and the agent as it is read (two
  threads, blocking reads and writes). Before it forwards a chunk it writes
  the transcript records of the lines the chunk completes (:mod:`.records`):
  a kill of the whole process tree at any moment loses at most the line
  being forwarded. It passes SIGINT, SIGTERM and SIGHUP to the agent and,
  once the agent has exited and its stdout is drained, writes the end
  record and exits with the agent's status, never waiting for the checks.
- :mod:`.observer` (started by the proxy, niced, in a process group of its
  own) reads the transcript as it grows and validates the records with
  :class:`acpgen.validate.Validator`, in a thread of its own behind a
  bounded queue, reporting each finding as it is found; after the proxy
  has gone it checks the rest of the transcript and writes a summary.
"""
