from turnstream.cli.main import main

main()
