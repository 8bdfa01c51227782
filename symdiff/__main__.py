"""python -m symdiff."""

from symdiff.cli import main

main()
