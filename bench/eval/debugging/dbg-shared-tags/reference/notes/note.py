class Note:
    def __init__(self, title, tags=None):
        self.title = title
        self.tags = list(tags) if tags is not None else []

    def tag(self, name):
        if name not in self.tags:
            self.tags.append(name)
        return self
