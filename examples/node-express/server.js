// An Express service as Tori runs it: it listens on $PORT, on 127.0.0.1 (the edge reaches it
// inside the app's own network namespace).
const express = require('express');
const compression = require('compression');
const cors = require('cors');
const morgan = require('morgan');

const app = express();
app.use(morgan('tiny'));
app.use(compression());
app.use(cors());

app.get('/', (req, res) => res.type('text').send('hello from express'));
app.get('/api/time', (req, res) => res.json({ now: new Date().toISOString() }));

const port = Number(process.env.PORT || 3000);
app.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
