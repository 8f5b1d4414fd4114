from claude_mem.entry import main

main()
