"""python -m symdiff."""

from symdiff.cli.main import main

main()
