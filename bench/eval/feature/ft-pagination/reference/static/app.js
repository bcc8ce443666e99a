// Client of the shelf API.
async function listBooks(limit = 20, offset = 0) {
  const res = await fetch(`/books?limit=${limit}&offset=${offset}`);
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
