"""The page's address: the app writes the search part (``?example=...``) into the browser's address bar with a
small component of its own, in place of Panel's ``Location``, which parses every value of the address as it
connects (a digit such as ``²`` or a number of 5,000 digits there was a "500: Internal Server Error") and
writes the address only once the document has been idle (under load, sometimes never)."""
from __future__ import annotations

import param
from panel.custom import JSComponent


class Address(JSComponent):
    """Writes ``search`` into the address bar (``history.replaceState``: no new history entry) as the page
    renders and after every change; reads nothing back."""

    search = param.String(default="", doc="The search part of the address to show: '' or '?key=value&...'.")

    _esm = """
    export function render({ model }) {
      const write = () => {
        const search = model.search;
        if (search && (search === "" || search.startsWith("?")) && window.location.search !== search) {
          window.history.replaceState(window.history.state, "", window.location.pathname + search);
        }
      };
      write();
      model.on("search", write);
      return document.createElement("span");
    }
    """
