from ebench.cli import main

main()
