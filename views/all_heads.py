"""Placeholder until this page is built."""
import streamlit as st

st.title("all_heads")
st.info("This page is being built.")
