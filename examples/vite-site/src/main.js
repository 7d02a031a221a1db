// Bundled by vite build into dist/assets/.
document.querySelector('#built').textContent = `Built by Vite ${import.meta.env.MODE === 'production' ? 'for production' : 'in development'}.`;
