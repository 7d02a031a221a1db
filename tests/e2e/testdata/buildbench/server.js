// The build benchmark's service: express, answering / with the dependencies it loaded.
const express = require('express');
const app = express();
app.get('/', (req, res) => {
  let extra = 'none';
  try { extra = require('is-number')(42) ? 'is-number' : 'none'; } catch (e) {}
  res.send('express ' + require('express/package.json').version + ' ' + extra);
});
app.listen(process.env.PORT, '127.0.0.1');
