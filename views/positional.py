"""Placeholder until this page is built."""
import streamlit as st

st.title("positional")
st.info("This page is being built.")
