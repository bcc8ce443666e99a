import sys


def main(argv):
    print("tides for", argv)
    return 0


def main_entry():
    sys.exit(main(sys.argv[1:]))
