from logforensics.cli import main

main()
