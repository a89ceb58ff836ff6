from toolbox.cli import main

main()
