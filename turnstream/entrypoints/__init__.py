"""What drives turnstream: the command line (:mod:`.cli`), the worker's HTTP routes (:mod:`.http`),
the worker's Faust app and its bootstrap, the replay of a file, the start-up checks."""
