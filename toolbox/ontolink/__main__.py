from ontolink.cli import main

main()
