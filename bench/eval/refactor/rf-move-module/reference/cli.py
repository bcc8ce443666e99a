import sys

from text import format as strings


def main(argv):
    print(strings.title_case(" ".join(argv)))


if __name__ == "__main__":
    main(sys.argv[1:])
