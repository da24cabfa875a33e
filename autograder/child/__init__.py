"""Code that runs inside the student's child process: the child's side of :mod:`autograder.sandbox`.

- :mod:`.runner`: the child: imports the submission's modules and answers the parent's requests
  (:mod:`.process_setup`: its seeding, rlimits, memory cap and trusted imports);
- :mod:`.wire`: the wire format (plain data and plain tensors, never pickles);
- :mod:`.tasks`: kit-provided routines run on the student's objects (the training loops);
  :mod:`.loop_probes`: the probe models those loops train, and the stand-ins (table lookups, no
  rule of the contract) a student's ``train_transformer`` calls in place of its own ``sequence_loss``
  and ``teacher_forcing``;
- :mod:`.proxies`, :mod:`.components`: the reference components a composite's child is served, as
  proxy modules whose calls go to the parent through one operator (``tkit::component``);
  :mod:`.component_calls`: their trusted side (the component server, a recorded graph's
  component nodes), run only where no student code runs;
- :mod:`.graphs`, :mod:`.graph_rules`, :mod:`.graph_schema`, :mod:`.graph_training`: a model
  recorded as a graph of ATen operators (plain data), validated against the operators' schemas
  and interpreted by the training checks' trusted child, which trains and measures it;
- :mod:`.zygote_child`: the fork server that imported torch once and forks each child;
- :mod:`.jail`: namespaces, the private root and the privilege drop (Linux);
- :mod:`.hugepages`: the zygote's memory on huge pages, so forks stay cheap.
- :mod:`.state`, :mod:`.snapshot`: the process-wide and module state a test starts in, put back between
  tests and exercises;
- :mod:`.frames`: the submission's own traceback frames of an exception;
- :mod:`.forbidden`: the contract's forbidden torch functions and classes, seen where student code reaches them;
- :mod:`.syscalls`: the seccomp filter closing what the namespaces leave shared; :mod:`.channels`: its probe.

In: requests over the pipe pair (:mod:`.wire`). Out: plain data, plain tensors and handles.
Only this package is copied into the sandbox (as ``_tkit_child``); it must import
nothing else of the kit: no solutions, no hidden tests, no catalog.
"""
