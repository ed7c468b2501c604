/** Entry point of the browser bundle: defines every element; `<salon-app>` in index.html takes over. */
import './elements/salon-app.js';
