"""One module per step of the round, each with the same contract (see lifecycle.py):

  start(state, rules, events)         opens the step: sets the phase, its queue and its record
  legal(state, rules, seat) -> moves  what the deciding seat may do (phases with decisions)
  apply(state, rules, seat, move, events)  checks and makes one move (phases with decisions)
  leave(state, rules, seat, events)   a player out of the game leaves the step (phases with decisions)
  finish(state, rules, events)        runs once the queue is empty, or as the game ends mid-step:
                                      settles and clears the record

Which step follows which is lifecycle.NEXT, and nowhere else.
"""
