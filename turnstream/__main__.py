from turnstream.entrypoints.cli.main import main

main()
