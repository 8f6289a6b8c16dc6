// The console's copy buttons: shown only where the browser lets a page write to the clipboard
// (a secure context), each copies the text of the element its data-copy attribute names, and says
// so to screen readers. Everything else works without this script.
const reveal = () => {
  if (!navigator.clipboard) return;
  for (const button of document.querySelectorAll('button[data-copy][hidden]')) button.hidden = false;
};

document.addEventListener('DOMContentLoaded', reveal);
// Live parts of a page are replaced as they refresh.
document.addEventListener('htmx:afterSwap', reveal);

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  const source = button && document.getElementById(button.dataset.copy);
  if (!source) return;
  const announcer = document.getElementById('announcer');
  try {
    await navigator.clipboard.writeText(source.textContent.trim());
    if (announcer) announcer.textContent = 'Copied to the clipboard.';
  } catch {
    if (announcer) announcer.textContent = 'Copying failed: select the text and copy it.';
  }
});
