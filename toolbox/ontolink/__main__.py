from ontolink.cli.main import main

main()
