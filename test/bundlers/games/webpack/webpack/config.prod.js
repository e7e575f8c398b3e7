const path = require('node:path');
const HtmlWebpackPlugin = require('html-webpack-plugin');

module.exports = {
  mode: 'production',
  entry: './src/main.js',
  output: { path: path.resolve(process.cwd(), 'dist'), filename: './bundle.min.js' },
  devtool: false,
  performance: { maxEntrypointSize: 2900000, maxAssetSize: 2900000 },
  module: {
    rules: [{ test: /\.js$/, exclude: /node_modules/, use: { loader: 'babel-loader', options: { presets: ['@babel/preset-env'] } } }],
  },
  plugins: [new HtmlWebpackPlugin({ template: './index.html' })],
};
