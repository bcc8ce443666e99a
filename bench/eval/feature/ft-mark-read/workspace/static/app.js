// Client of the shelf API.
async function listBooks() {
  const res = await fetch("/books");
  return res.json();
}

async function addBook(title, author, year) {
  const res = await fetch("/books", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ title, author, year }),
  });
  return res.json();
}
